"""scipy.special's C kernels beyond the basic ones: each rule (reverse and forward) against central
differences, in every argument with a closed-form derivative; the parameters without one (hyp2f1's a, b, c,
betainc's a, b, Bessel orders, ...) refused in both modes, never a zero; and through the engines."""

import warnings

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")

from contexts import derivative, gradient, hessian  # noqa: E402
from contexts.rules.cotangents import Refused  # noqa: E402
from contexts.rules.registry import NoDerivative, registry  # noqa: E402
from tests import fd  # noqa: E402
from tests.fd import check_rule  # noqa: E402

X = np.array([0.2, 0.45, 0.8])
POS = np.array([0.6, 1.3, 2.7])

# (function, arguments, differentiable positions, refused positions)
SPECS = [
    (sc.hyp2f1, (0.5, 1.5, 2.5, X), (3,), (0, 1, 2)),
    (sc.hyp1f1, (0.7, 1.9, POS), (2,), (0, 1)),
    (sc.hyp0f1, (1.7, POS), (1,), (0,)),
    (sc.hyperu, (0.5, 1.2, POS), (2,), (0, 1)),
    # (the shapes of the incomplete gamma and beta, the Bessel orders: numerical partials, scipy_special_shape)
    (sc.betainc, (2.0, 3.5, X), (0, 1, 2), ()),
    (sc.betainc, (1.0, 0.7, X), (0, 1, 2), ()),
    (sc.betaincc, (2.0, 3.5, X), (0, 1, 2), ()),
    (sc.betaincinv, (2.0, 3.5, X), (0, 1, 2), ()),
    (sc.betainccinv, (2.0, 3.5, X), (0, 1, 2), ()),
    (sc.gammainc, (2.5, POS), (0, 1), ()),
    (sc.gammaincc, (2.5, POS), (0, 1), ()),
    (sc.gammaincinv, (2.5, X), (0, 1), ()),
    (sc.gammainccinv, (2.5, X), (0, 1), ()),
    (sc.chdtr, (3.0, POS), (0, 1), ()),
    (sc.chdtrc, (3.0, POS), (0, 1), ()),
    (sc.gdtr, (1.5, 2.5, POS), (0, 1, 2), ()),
    (sc.gdtrc, (1.5, 2.5, POS), (0, 1, 2), ()),
    (sc.stdtr, (3.0, POS - 1), (0, 1), ()),
    (sc.erfcx, (POS - 1,), (0,), ()),
    (sc.erfi, (X,), (0,), ()),
    (sc.dawsn, (POS,), (0,), ()),
    (sc.wofz, (POS + 0.3j,), (0,), ()),
    (sc.ndtri, (X,), (0,), ()),
    (sc.ndtri_exp, (-POS,), (0,), ()),
    (sc.owens_t, (POS - 1, X), (0, 1), ()),
    (sc.voigt_profile, (POS - 1, 0.8, 0.6), (0, 1, 2), ()),
    (sc.j0, (POS,), (0,), ()), (sc.j1, (POS,), (0,), ()), (sc.y0, (POS,), (0,), ()), (sc.y1, (POS,), (0,), ()),
    (sc.i0, (POS - 1,), (0,), ()), (sc.i1, (POS - 1,), (0,), ()), (sc.i0e, (POS - 1,), (0,), ()),
    (sc.i1e, (POS - 1,), (0,), ()), (sc.k0, (POS,), (0,), ()), (sc.k1, (POS,), (0,), ()),
    (sc.k0e, (POS,), (0,), ()), (sc.k1e, (POS,), (0,), ()),
    (sc.jv, (1.5, POS), (0, 1), ()), (sc.yv, (1.5, POS), (0, 1), ()), (sc.iv, (1.5, POS), (0, 1), ()),
    (sc.kv, (1.5, POS), (0, 1), ()), (sc.kve, (1.5, POS), (0, 1), ()),
    (sc.ive, (1.5, POS - 1), (1,), (0,)),  # (the order at x <= 0: refused)
    (sc.jve, (1.5, POS), (0, 1), ()), (sc.yve, (1.5, POS), (0, 1), ()),
    (sc.jv, (1.5, POS + 0.5j), (1,), (0,)), (sc.kv, (0.5, POS + 0.5j), (1,), (0,)),
    (sc.yn, (2, POS), (1,), ()),
    (sc.struve, (0.7, POS), (1,), (0,)), (sc.modstruve, (0.7, POS), (1,), (0,)),
    (sc.rgamma, (np.array([-2.0, -0.5, 1.3, 3.0]),), (0,), ()),
    (sc.loggamma, (POS,), (0,), ()), (sc.loggamma, (POS + 1j,), (0,), ()),
    (sc.beta, (POS, 1.7), (0, 1), ()), (sc.betaln, (POS, 1.7), (0, 1), ()),
    (sc.binom, (POS + 3, 1.7), (0, 1), ()),
    (sc.zeta, (3.0, POS), (1,), (0,)),
    (sc.wrightomega, (POS - 1,), (0,), ()),
    (sc.spence, (np.array([0.3, 1.0, 2.5]),), (0,), ()),
    (sc.ellipk, (np.array([0.0, 0.3, 0.9]),), (0,), ()), (sc.ellipe, (np.array([0.0, 0.3, 0.9]),), (0,), ()),
    (sc.ellipkm1, (X,), (0,), ()),
    (sc.ellipkinc, (POS, np.array([0.0, 0.3, 0.6])), (0, 1), ()),
    (sc.ellipeinc, (POS, np.array([0.0, 0.3, 0.6])), (0, 1), ()),
    (sc.expi, (POS,), (0,), ()), (sc.exp1, (POS,), (0,), ()),
    (sc.expn, (2, POS), (1,), ()), (sc.expn, (0, POS), (1,), ()),
    (sc.sici, (POS,), (0,), ()), (sc.shichi, (POS,), (0,), ()), (sc.fresnel, (POS,), (0,), ()),
    (sc.expm1, (X,), (0,), ()), (sc.log1p, (X,), (0,), ()), (sc.cbrt, (POS,), (0,), ()),
    (sc.exp2, (X,), (0,), ()), (sc.exp10, (X,), (0,), ()),
    (sc.exprel, (np.array([-1.5, 1e-5, 0.0, 2.0]),), (0,), ()),
    (sc.sindg, (POS * 30,), (0,), ()), (sc.cosdg, (POS * 30,), (0,), ()), (sc.tandg, (POS * 20,), (0,), ()),
    (sc.cotdg, (POS * 20,), (0,), ()),
    (sc.boxcox, (POS, 0.4), (0, 1), ()), (sc.boxcox, (POS, 0.0), (0, 1), ()),
    (sc.boxcox1p, (X, 0.4), (0, 1), ()), (sc.boxcox1p, (X, 0.0), (0, 1), ()),
    (sc.inv_boxcox, (X, 0.4), (0, 1), ()), (sc.inv_boxcox, (X, 0.0), (0, 1), ()),
    (sc.inv_boxcox1p, (X, 0.4), (0, 1), ()), (sc.inv_boxcox1p, (X, 0.0), (0, 1), ()),
    (sc.entr, (POS,), (0,), ()), (sc.rel_entr, (POS, X), (0, 1), ()), (sc.kl_div, (POS, X), (0, 1), ()),
    (sc.huber, (1.0, POS - 1.2), (0, 1), ()), (sc.pseudo_huber, (1.3, POS - 1.2), (0, 1), ()),
]


def _id(spec):
    return spec[0].__name__


@pytest.mark.parametrize("spec", SPECS, ids=[_id(s) for s in SPECS])
def test_rule_against_central_differences(spec):
    fn, args, diff, _ = spec
    check_rule(fn, *args, diff=diff, rtol=2e-5, atol=1e-6)


REFUSED = [s for s in SPECS if s[3]]


@pytest.mark.parametrize("spec", REFUSED, ids=[_id(s) for s in REFUSED])
def test_parameters_without_a_closed_form_are_refused(spec):
    fn, args, diff, refused = spec
    rule = registry.get(fn)
    y = fn(*args)
    cts = rule.adjoint(np.ones_like(y), y, *args)
    for i in range(len(args)):
        if i in refused:
            assert type(cts[i]) is Refused  # a placeholder, never a zero
            assert type(cts[i] + 1.0) is Refused  # (an adjoint's linear steps keep it unknown)
            with pytest.raises(NoDerivative, match="no closed form"):
                float(cts[i] * 2.0)
            with pytest.raises(NoDerivative):
                np.asarray(cts[i], dtype=float)
        elif i in diff:
            assert cts[i] is not None
    for i in refused:
        tangents = [None] * len(args)
        tangents[i] = np.ones_like(np.asarray(args[i], dtype=float)) if np.ndim(args[i]) else 1.0
        with pytest.raises(NoDerivative, match=f"argument {'xabcvn'[0] if False else ''}"):
            rule.frule(tuple(tangents), *args)


def test_integer_parameters_and_zero_tangents_are_not_refused():
    rule = registry.get(sc.hyp2f1)
    y, dy = rule.frule((0.0, None, None, 1.0), 0.5, 1.5, 2.5, 0.3)  # a zero tangent: a zero term
    assert dy == pytest.approx(fd.derivative(lambda z: sc.hyp2f1(0.5, 1.5, 2.5, z), 0.3))
    y, dy = rule.frule((1.0, None, None, 1.0), 1, 2, 3, 0.3)  # integers have no tangent space
    assert dy == pytest.approx(fd.derivative(lambda z: sc.hyp2f1(1, 2, 3, z), 0.3))


def _model(x):
    """Parameters held in variables (reverse mode cannot prove them constant) next to the variable."""
    a, b = 0.5, 3.5
    return (sc.hyp2f1(a, 1.5, 2.5, x * 0.9) + sc.betainc(2.0, b, x) * a + sc.gammainc(b, x + 1.0)
            + sc.jv(a, x + 1.0) + sc.polygamma(1, x + 1.0) + sc.kv(1.5, x + 0.5) * sc.ellipk(x))


@pytest.mark.parametrize("mode", ["reverse", "forward", "hessian"])
def test_through_the_engines(mode):
    x = 0.35
    got = {"reverse": lambda: gradient(_model, x)[0], "forward": lambda: derivative(_model, x),
           "hessian": lambda: hessian(_model, x)}[mode]()
    want = (fd.derivative(_model, x) if mode != "hessian"
            else fd.derivative(lambda t: fd.derivative(_model, t, h=1e-4), x, h=1e-4))
    assert got == pytest.approx(want, rel=1e-5 if mode == "hessian" else 1e-7)


def _in_a(a):
    return sc.hyp2f1(a, 1.5, 2.5, 0.3) * 2.0 + sc.betainc(2.0 * a, 3.0, 0.4)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_differentiating_a_parameter_is_refused(mode):
    with pytest.raises(NoDerivative, match="no closed form"):
        if mode == "forward":
            derivative(_in_a, 0.5)
        else:
            # the Refused placeholder raises where it is used: inside the pass (2.0 * a), or, where it
            # reaches the argument itself, on its first use
            g = gradient(_in_a, 0.5)[0]
            float(g)


def test_reverse_refusal_of_a_direct_parameter():
    with pytest.raises(NoDerivative):  # the gradient asked for is not known: an error, never an object
        gradient(lambda a: sc.hyp2f1(a, 1.5, 2.5, 0.3), 0.5)
    r = sc_rules_refused()
    assert type(r) is Refused  # (what an adjoint hands back: unknown through linear steps, any other use refuses)
    assert type(-(r * 1.0)) is Refused
    with pytest.raises(NoDerivative):
        bool(r * 1.0)


def sc_rules_refused():
    from contexts.rules.registry import registry
    rule = registry.rules[sc.hyp2f1]
    return rule.adjoint(1.0, sc.hyp2f1(0.5, 1.5, 2.5, 0.3), 0.5, 1.5, 2.5, 0.3)[0]


@pytest.mark.parametrize("fn", [sc.yn, sc.expn], ids=["yn", "expn"])
@pytest.mark.parametrize("n", [0.55, 1.7, 2.0, -0.4])
def test_integer_order_given_as_a_float_is_truncated_in_the_derivative(fn, n):
    # yn(0.55, x) is yn(0, x): its x-derivative was taken by the recurrence at 0.55 (wrong, both modes)
    x = 0.7
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = (fn(n, x + 1e-6) - fn(n, x - 1e-6)) / 2e-6
        if not np.isfinite(expected):
            pytest.skip("undefined order")
        (g,) = gradient(lambda x: fn(n, x), x)
        d = derivative(lambda x: fn(n, x), x)
    assert g == pytest.approx(expected, rel=1e-7) and d == pytest.approx(expected, rel=1e-7)
