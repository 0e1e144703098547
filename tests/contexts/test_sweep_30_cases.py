"""Cases of session 30's sweeps (geomdl, PyNite, colossus, lmoments3, properscoring, pylorentz, kinpy, ikpy;
galpy, POT, prysm, stonesoup, copulas, python_speech_features, smt, anastruct; generated object-heavy
programs), each distilled to the idiom the library uses, checked against finite differences or a closed
form, or asserting the refusal that stands for a silent wrong."""

import numpy as np
import pytest
from scipy import special

from contexts import ADContext, gradient
from contexts.rules.registry import NoDerivative
from overdub.errors import OverdubError
from tests import fd
from tests.modes import assert_scalar_modes


# -- a loop variable bound again by a loop over items that carry no derivative --------------------------

def loop_variable_reused(k):
    # lmoments3's `for i in SUMM: ...` then `for i in range(...)`: reverse mode kept the first loop's
    # cotangent of i past the second loop's bindings (2.3 for 2.0; hessian 1.0 for 0)
    i = k
    for i in range(1, 3):
        pass
    return k * i


def loop_variable_reused_in_body(k):
    t = 0.0
    for i in [k, k]:
        pass
    for i in range(2):
        t = t + k * i
    return t


def loop_variable_reused_with_else(k):
    s = 0.0
    i = k
    for i in range(1, 3):
        if i > 5:
            break
        s = s + i
    else:
        s = s + 1.0
    return k * i + s


def loop_variable_tuple_target(k):
    i = k
    for i, j in zip(range(3), range(3)):
        pass
    return k * i * j


@pytest.mark.parametrize("f", [loop_variable_reused, loop_variable_reused_in_body, loop_variable_reused_with_else,
                               loop_variable_tuple_target])
def test_a_loop_over_constant_items_binds_its_variable_afresh(f):
    assert_scalar_modes(f, 0.3)


# -- np.vectorize given a closure -------------------------------------------------------------------------

def vectorized_closure_argument(m):
    # properscoring's `crps_quadrature(x, cdf)`: the closure was wrapped in a 0-d object array, whose
    # cotangent was lost (0.0 for 0.7)
    cdf = lambda y: y * m  # noqa: E731
    return float(np.vectorize(lambda x, c: c(x))(0.7, cdf))


class _Scale:
    def __init__(self, m):
        self.m = m

    def __call__(self, y):
        return y * self.m * self.m


def vectorized_object_argument(m):
    return float(np.sum(np.vectorize(lambda x, c: c(x))(np.array([0.7, 1.1]), _Scale(m))))


@pytest.mark.parametrize("f", [vectorized_closure_argument, vectorized_object_argument])
def test_vectorize_gives_an_argument_it_cannot_broadcast_to_each_call(f):
    want = fd.derivative(f, 0.2)
    with ADContext():
        assert gradient(f, 0.2)[0] == pytest.approx(want, rel=1e-6)


# -- constants computed inside a call -----------------------------------------------------------------------

_CACHE: dict = {}


def _basis(q, n):
    key = (q, n)
    if key not in _CACHE:
        _CACHE[key] = np.exp(-1j * np.arange(n) / q)
    return _CACHE[key]


def memo_keyed_by_a_computed_constant(c):
    # prysm's DFT-matrix cache: a key computed from literals only (no derivative can be in it) was taken
    # for a differentiated one, and the memo's entry refused
    q = 0.55 * 50.0 / 0.125
    return float(np.abs(_basis(q, 3) @ (np.array([1.0, 2.0, 3.0]) * c)) ** 2)


def test_a_memo_key_computed_from_literals_is_a_constant():
    memo_keyed_by_a_computed_constant(0.7)  # (an earlier plain call filled the memo)
    assert_scalar_modes(memo_keyed_by_a_computed_constant, 0.7, second=False)


class _Cutoff:
    # galpy's PowerSphericalPotentialwCutoff: `gammainc(1.0 - self.alpha / 2.0, r ** 2)`, a constant field
    def __init__(self):
        self.alpha = 1.8

    def value(self, r):
        return special.gammainc(1.0 - self.alpha / 2.0, r ** 2.0)


def test_a_parameter_without_a_closed_form_computed_from_a_constant_field():
    # the adjoint's unknown cotangent of `a` went through `1.0 - alpha / 2.0`'s adjoint, which refused at
    # once: now it is unknown through linear steps and dropped at the field, which is not differentiated
    p = _Cutoff()
    want = fd.derivative(p.value, 1.1)
    with ADContext():
        assert gradient(p.value, 1.1)[0] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("f", [
    lambda a: special.gammainc(1.0 - a / 2.0, 2.0),
    lambda a: float(np.sum(special.gammainc(1.0 - np.array([a, 2 * a]) / 2.0, 2.0))),
    lambda a: special.gammainc(-(a * 3.0) + 2.0, 2.0) * 2.0,
])
def test_a_differentiated_parameter_without_a_closed_form_is_still_refused(f):
    with ADContext(), pytest.raises(NoDerivative):
        gradient(f, 0.5)


class _Holder:
    def __init__(self, a):
        self.a = a


def test_an_object_input_whose_field_has_no_closed_form_is_refused():
    with ADContext(), pytest.raises(OverdubError):
        gradient(lambda o: special.gammainc(1.0 - o.a / 2.0, 2.0), _Holder(0.5))
