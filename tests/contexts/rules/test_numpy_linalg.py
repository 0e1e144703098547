"""Linear-algebra rules against central finite differences: one spec line per case."""

import operator

import numpy as np
import pytest

import contexts.rules.numpy.linalg  # noqa: F401  (registers the rules)
from contexts.rules.numpy._util import UnsupportedCase
from contexts.rules.registry import registry

from tests.fd import check_rule

_rng = np.random.default_rng(20261121)


def R(*shape):
    return _rng.standard_normal(shape)


def C(*shape):
    return _rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)


def spd(*shape):
    x = R(*shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def f32(x):
    return x.astype(np.float32)


# (key, args, kwargs, indices of differentiable arguments)
SPECS = [
    *[(op, (a, b), {}, (0, 1)) for op in (np.matmul, operator.matmul) for a, b in [
        (R(3), R(3)), (R(2, 3), R(3)), (R(3), R(3, 4)), (R(2, 3), R(3, 4)), (R(5, 2, 3), R(3, 4)),
        (R(5, 2, 3), R(3)), (R(3), R(5, 3, 4)), (R(1, 2, 3), R(5, 3, 4)), (C(2, 3), C(3)), (C(2, 3), R(3, 2))]],
    ((np.ndarray, "__matmul__"), (R(2, 3), R(3)), {}, (0, 1)),
    *[(np.dot, (a, b), {}, (0, 1)) for a, b in [
        (R(3), R(3)), (R(2, 3), R(3, 4)), (2.0, R(3)), (R(3), 2.0), (R(2, 3, 4), R(4, 5)),
        (R(2, 3, 4), R(5, 4, 6)), (R(2, 3, 4), R(4)), (C(2, 3), C(3))]],
    ((np.ndarray, "dot"), (R(2, 3), R(3, 4)), {}, (0, 1)),
    (np.tensordot, (R(2, 3, 4), R(3, 4, 5)), {}, (0, 1)),
    (np.tensordot, (R(2, 3, 4), R(3, 4, 5), 2), {}, (0, 1)),
    (np.tensordot, (R(2, 3, 4), R(4, 5)), {"axes": 1}, (0, 1)),
    (np.tensordot, (R(2, 3), R(4, 5)), {"axes": 0}, (0, 1)),
    (np.tensordot, (R(2, 3, 4), R(4, 3, 5)), {"axes": ([1, 2], [1, 0])}, (0, 1)),
    (np.tensordot, (R(2, 3, 4), R(4, 2, 5)), {"axes": ([2, 0], [0, 1])}, (0, 1)),
    (np.tensordot, (R(2, 3, 4), R(4, 5)), {"axes": (-1, 0)}, (0, 1)),
    (np.inner, (R(2, 3), R(4, 3)), {}, (0, 1)),
    (np.inner, (R(3), R(3)), {}, (0, 1)),
    (np.inner, (R(3), 1.5), {}, (0, 1)),
    (np.outer, (R(2, 3), R(4)), {}, (0, 1)),
    *[(np.einsum, (s, *ops), {}, tuple(range(1, len(ops) + 1))) for s, ops in [
        ("ij,jk->ik", (R(2, 3), R(3, 4))), ("ij,jk", (R(2, 3), R(3, 4))), ("ii->", (R(3, 3),)),
        ("ii", (R(3, 3),)), ("ii->i", (R(3, 3),)), ("ij->", (R(2, 3),)), ("i,i", (R(3), R(3))),
        ("...ij,...jk->...ik", (R(5, 2, 3), R(5, 3, 4))), ("bij,jk->bik", (R(2, 2, 3), R(3, 4))),
        ("iij,jk->ik", (R(3, 3, 2), R(2, 4))), ("i,j->ij", (R(3), R(4))), ("ij,k->i", (R(2, 3), R(4))),
        ("...i,i->...", (R(2, 5, 3), R(3))), ("ij...->ji...", (R(2, 3, 4),)), ("ij,ij->", (C(2, 3), C(2, 3))),
        ("ijk,jl,kl->il", (R(2, 3, 4), R(3, 5), R(4, 5)))]],
    (np.einsum, ("ij,jk,kl->il", R(2, 3), R(3, 4), R(4, 2)), {"optimize": True}, (1, 2, 3)),
    (np.trace, (R(3, 3),), {}, (0,)),
    (np.trace, (R(3, 4), 1), {}, (0,)),
    (np.trace, (R(2, 3, 4),), {"offset": -1, "axis1": 1, "axis2": 2}, (0,)),
    ((np.ndarray, "trace"), (R(4, 3),), {}, (0,)),
    (np.diagonal, (R(3, 4), 1), {}, (0,)),
    (np.diagonal, (R(2, 3, 4),), {"axis1": 2, "axis2": 0}, (0,)),
    ((np.ndarray, "diagonal"), (R(3, 3),), {}, (0,)),
    (np.diag, (R(3),), {}, (0,)),
    (np.diag, (R(3), 1), {}, (0,)),
    (np.diag, (R(3, 4),), {}, (0,)),
    (np.diag, (R(3, 4),), {"k": -1}, (0,)),
    (np.linalg.inv, (R(3, 3),), {}, (0,)),
    (np.linalg.inv, (R(2, 3, 3),), {}, (0,)),
    (np.linalg.inv, (C(3, 3),), {}, (0,)),
    (np.linalg.det, (R(3, 3),), {}, (0,)),
    (np.linalg.det, (R(2, 3, 3),), {}, (0,)),
    (np.linalg.det, (C(3, 3),), {}, (0,)),
    (np.linalg.slogdet, (R(3, 3),), {}, (0,)),
    (np.linalg.slogdet, (R(2, 3, 3),), {}, (0,)),
    (np.linalg.solve, (R(3, 3), R(3)), {}, (0, 1)),
    (np.linalg.solve, (R(3, 3), R(3, 2)), {}, (0, 1)),
    (np.linalg.solve, (R(4, 3, 3), R(4, 3, 2)), {}, (0, 1)),
    (np.linalg.solve, (R(3, 3), R(4, 3, 2)), {}, (0, 1)),
    (np.linalg.solve, (C(3, 3), C(3)), {}, (0, 1)),
    (np.linalg.cholesky, (spd(3, 3),), {}, (0,)),
    (np.linalg.cholesky, (spd(2, 4, 4),), {}, (0,)),
    (np.linalg.eigh, (spd(3, 3),), {}, (0,)),
    (np.linalg.eigh, (spd(2, 4, 4),), {}, (0,)),
    *[(np.linalg.svd, (R(*shape),), {"full_matrices": False}, (0,))
      for shape in [(3, 3), (4, 3), (3, 5), (2, 4, 3), (2, 3, 4)]],
    (np.linalg.svd, (R(4, 3),), {"compute_uv": False}, (0,)),
    (np.linalg.svd, (R(3, 3),), {}, (0,)),
    (np.linalg.svdvals, (R(3, 4),), {}, (0,)),
    *[(np.linalg.pinv, (a,), {}, (0,)) for a in (R(3, 4), R(4, 3), R(3, 3), R(2, 3, 5), C(3, 2))],
    (np.linalg.pinv, (spd(3, 3),), {"hermitian": True}, (0,)),
    (np.linalg.pinv, (R(4, 3), 1e-10), {}, (0,)),
    (np.linalg.eigvalsh, (spd(2, 3, 3),), {}, (0,)),
    *[(fn, (a, b), {}, (0, 1)) for fn in (np.vecdot, np.linalg.vecdot) for a, b in [
        (R(3), R(3)), (R(2, 3), R(3)), (R(1, 3), R(4, 1, 3)), (C(2, 3), C(2, 3))]],
    *[(np.matvec, (a, v), {}, (0, 1)) for a, v in [
        (R(2, 3), R(3)), (R(5, 2, 3), R(3)), (R(2, 3), R(4, 3)), (C(2, 3), C(3))]],
    *[(np.vecmat, (v, a), {}, (0, 1)) for v, a in [
        (R(2), R(2, 3)), (R(4, 2), R(2, 3)), (R(2), R(5, 2, 3)), (C(2), C(2, 3))]],
    (np.linalg.matmul, (R(2, 3), R(3, 4)), {}, (0, 1)),
    (np.linalg.tensordot, (R(2, 3), R(3, 4)), {"axes": 1}, (0, 1)),
    (np.linalg.outer, (R(2), R(3)), {}, (0, 1)),
    (np.linalg.trace, (R(2, 3, 3),), {"offset": 1}, (0,)),
    (np.linalg.diagonal, (R(2, 3, 4),), {}, (0,)),
]


def _id(spec):
    key, args, kwargs, _ = spec
    name = key[1] if isinstance(key, tuple) else getattr(key, "__name__", str(key))
    shapes = ",".join(a if isinstance(a, str) else "x".join(map(str, np.shape(a))) for a in args)
    return f"{name}({shapes}{',' if kwargs else ''}{','.join(map(str, kwargs))})"


@pytest.mark.parametrize("spec", SPECS, ids=[_id(s) for s in SPECS])
def test_rule_matches_finite_differences(spec):
    key, args, kwargs, diff = spec
    check_rule(key, *args, diff=diff, **kwargs)


def test_float32_cotangent_stays_float32():
    a, b = f32(R(2, 3)), f32(R(3))
    da, db = registry.get(np.matmul).adjoint(np.ones(2, np.float32), a @ b, a, b)
    assert da.dtype == np.float32 and db.dtype == np.float32
    check_rule(np.matmul, a, b, diff=(0, 1), h=1e-2, rtol=1e-3, atol=1e-3)


def test_real_operand_of_complex_product_gets_real_cotangent():
    a, b = R(2, 3), C(3)
    da, db = registry.get(np.matmul).adjoint(np.ones(2, complex), a @ b, a, b)
    assert da.dtype == np.float64 and db.dtype == np.complex128


def test_vector_matrix_pullback_is_an_outer_product():
    a, b = R(4, 3), R(3)
    dy = R(4)
    da, _ = registry.get(np.matmul).adjoint(dy, a @ b, a, b)
    np.testing.assert_allclose(da, np.outer(dy, b))


def test_slogdet_with_only_the_sign_cotangent_is_zero():
    a = R(3, 3)
    assert registry.get(np.linalg.slogdet).adjoint((1.0, None), np.linalg.slogdet(a), a) == (None,)


@pytest.mark.parametrize("call", [
    lambda: registry.get(np.linalg.svd).adjoint((R(4, 4), R(3), R(3, 3)), np.linalg.svd(R(4, 3)), R(4, 3)),
])
def test_unsupported_cases_say_so(call):
    with pytest.raises(UnsupportedCase, match="possible fix"):
        call()


def test_interp_rule_against_finite_differences():
    from contexts.rules.check import check_rule
    x = np.array([0.3, 1.7, 2.2, -1.0, 5.0])
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, -2.0, 0.5, 3.0])
    check_rule(np.interp, x, xp, fp)
    check_rule(np.interp, 1.3, xp, fp)
