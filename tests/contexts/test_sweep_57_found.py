"""What session 57 found, each checked in reverse and forward mode against central differences (each failed
before).

- numpy 2.5's `np.linalg.cond(a)` (the 2-norm, -2 and 'nuc') calls the gufunc under the singular values,
  `_umath_linalg.svd(x, signature=...)`, itself (`_cond_svdvals`, which gives nan where svd raises): refused as
  a C function in both modes on numpy 2.5 (quantecon's Riccati solver picks its shift by the condition
  number). The gufunc has the rules of `np.linalg.svd(a, compute_uv=False)`.
- **Silently wrong in both modes**: a special case at an equality with a constant reached by a value whose
  rate there is an exact 0 (`n = norm(v)`; `if n == 0: return t` before a rotation by the vector v, as
  pyquaternion, transforms3d and every axis-angle code write it): the special case's derivative came out, 0
  for [1.5, -0.55, -0.8]. A zero rate computed from the inputs no longer proves the value still (`|v|**2`
  leaves 0 at second order; a norm's rule gives its kink's subgradient): such a special case, and every
  special case at an equality with a moving value, is judged from the two sides of the point
  (`lowered.runtime.SpecialCase`): continuous through it, the sides' derivative; a special value that is not
  the sides' limit, a cone's apex (the sides' mean differing along two directions), sides that disagree:
  refused.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.linalg import _umath_linalg

from contexts import SpecialPoint
from tests import fd

T = np.array([1.0, 2.0, 0.5])
W = np.array([0.3, -0.2, 0.7])


def _by_2_norms(x):
    a = np.array([[2.0, x[0], 0.3], [x[1], 1.0 + x[0] * x[1], 0.2], [0.1, x[0], 1.5]])
    return float(np.linalg.cond(a) + np.linalg.cond(a, -2) * x[1] + np.linalg.cond(a, "nuc"))


def _singular_values_by_the_gufunc(x):
    a = np.stack([np.outer(x, x[::-1]) + np.eye(3), np.diag(x) + 0.5])  # (a batch of two)
    s = _umath_linalg.svd(a, signature="d->d")
    return float(np.sum(s[:, 0] * s[:, -1]) + s[1, 1] ** 2)


def _jacobian(mode, f, x):
    from contexts import gradient, jacfwd
    return gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [_by_2_norms, _singular_values_by_the_gufunc])
def test_condition_number_by_the_2_norm_and_the_svd_gufunc(mode, f):
    x = np.array([0.3, 0.7, -1.2])
    np.testing.assert_allclose(_jacobian(mode, f, x), fd.gradient(f, x)[0], rtol=1e-7, atol=1e-10)


def test_svd_gufunc_sparsity_is_dense():
    from contexts import jacobian_sparsity

    def f(x):
        return _umath_linalg.svd(np.diag(x) + 0.1, signature="d->d")
    pattern = jacobian_sparsity(f, np.array([0.3, 0.7, 1.2]))
    pattern = np.asarray(pattern.todense()) if hasattr(pattern, "todense") else np.asarray(pattern)
    assert pattern.shape == (3, 3) and pattern.all()


def _rotated(v):
    """W . (T rotated by the rotation vector v), Rodrigues' formula with its special case at v = 0."""
    n = float(np.linalg.norm(v))
    if n == 0.0:
        return float(T @ W)
    k = v / n
    r = T * math.cos(n) + np.cross(k, T) * math.sin(n) + k * (k @ T) * (1.0 - math.cos(n))
    return float(r @ W)


def _rotated_by_square(v):
    n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]  # (its rate at 0 is an exact 0, yet it leaves 0)
    if n2 == 0.0:
        return float(T @ W)
    return _rotated(v)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [_rotated, _rotated_by_square])
def test_rotation_vector_special_case_at_zero(mode, f):
    x = np.zeros(3)
    want = np.cross(T, W)  # (d/dv of W . (T + v x T) at 0: (T x W))
    np.testing.assert_allclose(_jacobian(mode, f, x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(_jacobian(mode, f, x + 0.1), fd.gradient(f, x + 0.1)[0], rtol=1e-7)


def _cone(v):
    r2 = v[0] ** 2 + v[1] ** 2
    if r2 == 0:
        return 0.0
    return v[0] * v[1] ** 2 / r2  # (continuous, linear along every line through 0: no derivative there)


def _off_the_limit(x):
    if x == 0.0:
        return 2.0
    return math.exp(x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_no_derivative_at_the_special_case_refused(mode):
    with pytest.raises(SpecialPoint, match="two directions|another direction"):
        _jacobian(mode, _cone, np.zeros(2))
    with pytest.raises(SpecialPoint, match="not the limit"):
        from contexts import derivative, gradient
        gradient(_off_the_limit, 0.0) if mode == "reverse" else derivative(_off_the_limit, 0.0)


class _AnswersNothing:
    """numpy's `BagObj` (the `.f` of a kept `np.load(...npz)`): every attribute, `__class__` too, raises."""

    def __getattribute__(self, key):
        raise AttributeError(key)


def test_an_object_answering_no_attribute_is_walked_past():
    # (reverse mode's alias search met one in pyatmos' coesa76 and crashed, AttributeError: __class__, where
    # forward mode and central differences give dT/dh = -6.48 at 7.5 km)
    from contexts.rules.cotangents import has_fields
    assert has_fields(_AnswersNothing()) is True  # (a plain object with a __dict__ of its own, not an array)
