"""`match` on differentiated values in every mode. The lowering binds each case's capture names again
from the subject by the reads they stand for (`case (a, *r):` is `a = s[0]`, `r = list(s[1:])`), so
every transformer follows them; class patterns (`case float(v):`) ask isinstance natively, which would
answer for a dual or a tracer, so those are refused where a dual or tracer reaches them, and work where
the mode sees plain values. Each result against central differences, or a refusal: never a wrong number."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import MissingRule, UnsupportedFunction, derivative, gradient, hessian, jacfwd, jvp
from contexts.sparsity import jacobian_sparsity
from contexts.sparsity.tracer import TracedBranchError
from tests import fd


class P:
    __match_args__ = ("u", "w")

    def __init__(self, u, w):
        self.u, self.w = u, w


def sequences(a, b):
    r = 0.0
    match (a, b):
        case (t1, t2) if t1 > 100.0:
            r = r + t1
        case (t1, t2):
            r = r + t1 * t2 + 0.5
    match [a, b, 1.0]:
        case [t1, *rest]:
            r = r + t1 + sum(rest) * a
    match (a, b, a * b):
        case (x, *mid, last):
            r = r + last * mid[0]
    return r


def mappings_and_as(a, b):
    r = 0.0
    match {"k": a * b, "j": b}:
        case {"k": t1}:
            r = r + t1 * 3.0
    match [a, [b, a]]:
        case [x, [y, *_]] as whole:
            r = r + x * y + whole[0] * b
    match a:
        case 1.0:
            r = r - 1.0
        case _:
            r = r + a * a
    return r


def class_patterns(a, b):
    r = 0.0
    match a * 2.0:
        case float(v):
            r = r + v * v
    match P(a, b * b):
        case P(u=q, w=z):
            r = r + q * z
    match P(b, a):
        case P(q, z):
            r = r + q * z * z
    return r


X = (0.7, 1.3)
REFUSALS = (UnsupportedFunction, MissingRule, TracedBranchError)
MODES = {
    "gradient": (lambda f: np.array(gradient(f, *X)), lambda g, H: g),
    "jvp": (lambda f: jvp(f, X, (1.0, -0.5))[1], lambda g, H: g @ [1.0, -0.5]),
    "derivative": (lambda f: derivative(lambda s: f(X[0] + s, X[1] - 0.5 * s), 0.0), lambda g, H: g @ [1.0, -0.5]),
    "jacfwd": (lambda f: jacfwd(lambda v: f(v[0], v[1]), np.array(X)), lambda g, H: g),
    "hessian": (lambda f: hessian(lambda v: f(v[0], v[1]), np.array(X)), lambda g, H: H),
    "hessian_forward": (lambda f: hessian(lambda v: f(v[0], v[1]), np.array(X), inner="forward"), lambda g, H: H),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("f", [sequences, mappings_and_as, class_patterns], ids=lambda f: f.__name__)
def test_right_or_refused(f, mode):
    run, want = MODES[mode]
    g = np.array(fd.gradient(f, *X))
    H = fd.hessian(lambda v: f(v[0], v[1]), np.array(X))
    try:
        got = run(f)
    except REFUSALS:
        assert f is class_patterns, f"{f.__name__} refused in {mode}"
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), want(g, H), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f", [sequences, mappings_and_as], ids=lambda f: f.__name__)
def test_captures_are_differentiated_in_every_mode(f):
    g = np.array(fd.gradient(f, *X))
    np.testing.assert_allclose(np.array(gradient(f, *X)), g, rtol=1e-6)
    np.testing.assert_allclose(hessian(lambda v: f(v[0], v[1]), np.array(X)),
                               fd.hessian(lambda v: f(v[0], v[1]), np.array(X)), rtol=1e-4, atol=1e-6)


def test_class_patterns_on_duals_are_refused_not_mismatched():
    with pytest.raises(MissingRule, match="class patterns"):
        jvp(lambda a, b: class_patterns(a, b) + 0.0, X, (1.0, 0.0))


@pytest.mark.parametrize("how", ["global", "local"])
def test_sparsity(how):
    def vec(v):
        return np.array([sequences(v[0], v[1]), mappings_and_as(v[0], v[1])])
    x = np.array(X)
    try:
        P_ = jacobian_sparsity(vec, x, mode=how).toarray()
    except TracedBranchError:  # global mode: the guard `if t1 > 100.0` branches on a traced value
        assert how == "global"
    else:
        assert not np.any((np.abs(fd.jacobian(vec, x)) > 1e-8) & ~P_)
    with pytest.raises(REFUSALS):
        jacobian_sparsity(lambda v: np.array([class_patterns(v[0], v[1])]), x, mode=how)
