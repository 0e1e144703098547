"""Reverse mode through astropy Quantities (ndarray subclasses whose units are metadata, converted by Python
code). `q.view(np.ndarray)` (how `to_value` and `__array_ufunc__` unwrap a Quantity) is ndarray.view's rule,
inherited by the subclass (it was refused: no rule for Quantity.view); a view in another dtype is refused.
A Quantity's special methods are its class's code (`float(q)` of a scaled dimensionless Quantity multiplies
by the scale): taken for a plain array's, the gradient was silently wrong by that scale (1000 for km/m);
now that code runs or the call is refused. Against central differences."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient
from overdub.errors import OverdubError
from tests import fd

u = pytest.importorskip("astropy.units")
cosmology = pytest.importorskip("astropy.cosmology")

X = np.array([0.3, 1.2, -0.7])
KM = 1.0 * u.km


def value_of_product(x):
    return np.sum((x * KM).value ** 2)


def plain_view(x):
    return np.sum(x.view() * x.view(np.ndarray))


@pytest.mark.parametrize("f", [value_of_product, plain_view], ids=lambda f: f.__name__)
def test_gradient(f):
    (g,) = gradient(f, X)
    np.testing.assert_allclose(g, fd.gradient(f, X)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("z", [0.5, 2.0])
def test_comoving_distance(z):
    cosmo = cosmology.FlatLambdaCDM(H0=70.0, Om0=0.3)
    f = lambda z: cosmo.comoving_distance(z).value  # noqa: E731
    f(z)  # (astropy's unit caches filled: differentiating their first filling recurses too deep, refused)
    np.testing.assert_allclose(gradient(f, z)[0], fd.gradient(f, z)[0], rtol=1e-6)


def test_float_of_a_scaled_dimensionless_quantity_is_never_wrong():
    f = lambda x: float(np.sum(x * KM / (2.0 * u.m)))  # noqa: E731  (500 sum(x): km / m is 1000)
    try:
        (g,) = gradient(f, X)
    except OverdubError:
        return  # refused: acceptable
    np.testing.assert_allclose(g, fd.gradient(f, X)[0], rtol=1e-6)


def test_view_in_another_dtype_is_refused():
    from contexts.rules.numpy._util import UnsupportedCase
    with pytest.raises(UnsupportedCase, match="another dtype"):
        gradient(lambda x: np.sum(x.view(np.int64) * 1.0), X)
