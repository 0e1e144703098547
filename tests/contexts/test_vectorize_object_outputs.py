"""`np.vectorize(f, otypes=[np.ndarray])` of an f returning a tuple has one output (numpy counts outputs by
`otypes` where given): an object array holding each tuple whole, which itur's ITU-R P.838 coefficients
unpack by `np.array(fcn(f, el, tau).tolist())`. The engines counted outputs by the first result (two):
reverse mode's stand-in crashed reading `otypes[1]` (IndexError), forward mode returned the tuple of outputs
(`.tolist()`: AttributeError) (sweep U). Gradients against central differences, in every mode."""

import numpy as np
import pytest

from contexts import derivative, gradient, jvp
from tests import fd


def _coeffs(f, el):
    return f ** 2, 3.0 * f + el


def held_whole(f):
    fcn = np.vectorize(_coeffs, excluded=[1], otypes=[np.ndarray])
    k, a = np.array(fcn(f, 0.5).tolist())
    return k * a


def held_whole_array(f):
    fcn = np.vectorize(_coeffs, excluded=[1], otypes=[object])
    pairs = fcn(np.array([f, 2.0 * f]), 0.5)
    return sum(k * a for k, a in pairs.tolist())


def two_typed_outputs(f):
    k, a = np.vectorize(_coeffs, excluded=[1], otypes=[float, float])(np.array([f, f + 1.0]), 0.5)
    return np.sum(k * a)


def one_object_number(f):
    return np.sum(np.vectorize(lambda v: v * v, otypes=[object])(np.array([f, 3.0])).astype(float))


@pytest.mark.parametrize("f", [held_whole, held_whole_array, two_typed_outputs, one_object_number],
                         ids=lambda f: f.__name__)
def test_right_in_every_mode(f):
    want = fd.derivative(f, 1.7)
    np.testing.assert_allclose(gradient(f, 1.7)[0], want, rtol=1e-7)
    np.testing.assert_allclose(derivative(f, 1.7), want, rtol=1e-7)
    np.testing.assert_allclose(jvp(f, (1.7,), (1.0,))[1], want, rtol=1e-7)


def test_numpy_agrees_on_the_plain_values():
    fcn = np.vectorize(_coeffs, excluded=[1], otypes=[np.ndarray])
    out = fcn(np.array([1.0, 2.0]), 0.5)
    assert out.dtype == object and out.shape == (2,) and out[1] == (4.0, 6.5)
